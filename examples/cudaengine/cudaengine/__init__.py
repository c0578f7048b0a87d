"""cudaengine: a toy engine whose decode step is captured with torch.cuda graphs (no seamgate code)."""
