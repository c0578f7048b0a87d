"""Real-layout projects (src layout installed editable, flat with filterwarnings=error, setup.cfg): seamgate run gives each its exact red set."""
