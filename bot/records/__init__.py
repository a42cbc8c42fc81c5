"""Records: the typed values every layer shares (job and advice types, knowledge records), errors, settings, text
normalisation. Imports nothing else from bot/."""
