"""The Slack app (Bolt): events, slash commands and buttons in, Block Kit out. Only here is Slack imported."""
