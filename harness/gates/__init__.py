"""Gate files: reading them strictly, the gate model, named selections, the schema, and the gates that could never fail."""
