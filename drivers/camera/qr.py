"""QR codes in a frame, with their corners in the symbol's own order.

pyzbar's ``decode`` passes zbar's corner points through a convex hull, which loses the order
zbar gives them in. zbar reports a QR symbol's corners as the symbol's own top-left,
bottom-left, bottom-right and top-right (it has found the three finder patterns to decode
it), whatever way round the code lies in the image; this module reads them in that order
through pyzbar's ctypes bindings, so the orientation comes from the symbol itself and any
conforming printer's codes are read alike.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pyzbar import wrapper as zbar
from pyzbar.pyzbar import ZBarConfig, ZBarSymbol

FloatArray = npt.NDArray[np.float64]
U8Array = npt.NDArray[np.uint8]

_GREY = 0x30303859  # fourcc "Y800": 8-bit grey


@dataclass(frozen=True)
class QRSymbol:
    text: str
    corners: FloatArray  # 4x2 image px: the symbol's top-left, bottom-left, bottom-right, top-right


def read_qr(grey: U8Array) -> list[QRSymbol]:
    """Every QR code zbar decodes in the grey image, with its corners in symbol order."""
    image = np.ascontiguousarray(grey, dtype=np.uint8)
    if image.ndim != 2 or image.size == 0:
        raise ValueError(f"read_qr wants a grey image, not an array of shape {image.shape}")
    h, w = image.shape
    data = image.tobytes()
    scanner = zbar.zbar_image_scanner_create()
    if not scanner:
        raise RuntimeError("zbar: cannot create an image scanner")
    out: list[QRSymbol] = []
    try:
        zbar.zbar_image_scanner_set_config(scanner, 0, ZBarConfig.CFG_ENABLE, 0)
        zbar.zbar_image_scanner_set_config(scanner, ZBarSymbol.QRCODE, ZBarConfig.CFG_ENABLE, 1)
        img = zbar.zbar_image_create()
        if not img:
            raise RuntimeError("zbar: cannot create an image")
        try:
            zbar.zbar_image_set_format(img, _GREY)
            zbar.zbar_image_set_size(img, w, h)
            buffer = ctypes.c_char_p(data)
            zbar.zbar_image_set_data(img, ctypes.cast(buffer, ctypes.c_void_p), len(data), None)
            if zbar.zbar_scan_image(scanner, img) < 0:
                raise RuntimeError("zbar: unsupported image format")
            symbol = zbar.zbar_image_first_symbol(img)
            while symbol:
                n = zbar.zbar_symbol_get_loc_size(symbol)
                raw = ctypes.string_at(
                    zbar.zbar_symbol_get_data(symbol), zbar.zbar_symbol_get_data_length(symbol)
                )
                if n == 4:
                    pts = [
                        (
                            zbar.zbar_symbol_get_loc_x(symbol, i),
                            zbar.zbar_symbol_get_loc_y(symbol, i),
                        )
                        for i in range(4)
                    ]
                    corners = np.array(pts, np.float64)
                    out.append(QRSymbol(raw.decode("utf-8", errors="replace"), corners))
                symbol = zbar.zbar_symbol_next(symbol)
        finally:
            zbar.zbar_image_destroy(img)
    finally:
        zbar.zbar_image_scanner_destroy(scanner)
    return out
