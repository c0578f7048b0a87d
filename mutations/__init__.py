"""mutations package."""
