"""floorctl: everything that is not a device."""
