"""``dualad.numpy.fft``: ``numpy.fft`` for Tensors (linear, differentiable in both modes).

``np.fft.fft(t)`` on a Tensor dispatches here.

>>> import dualad as da, dualad.numpy as dnp
>>> dnp.fft.fft(da.tensor([1.0, 1.0]))
tensor([2.+0.j, 0.+0.j])
"""

from ..rules.fft import (  # noqa: F401
    __all__,
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)
