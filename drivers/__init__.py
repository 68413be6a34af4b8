"""floorctl device drivers: the card-shoe reader and the chip camera."""
