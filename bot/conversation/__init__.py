"""Conversation: one turn as a pure function: parse the text, fill the job's slots, ask back or answer."""
