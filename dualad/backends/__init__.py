"""Array backends: the namespace of an array (NumPy, CuPy, Dask) and what dualad needs
of each (``namespace``), and Dask's collection protocol for Tensors (``dask``)."""
