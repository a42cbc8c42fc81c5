"""Render: computed advice to plain text, Block Kit and JSON; the wording of both languages lives in templates/."""
