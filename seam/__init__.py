"""seam package."""
