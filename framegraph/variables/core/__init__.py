"""The tracker protocol and what every family stands on."""
