"""toyengine: a toy inference engine whose decode step is migrated onto seamgate's capture seam."""
