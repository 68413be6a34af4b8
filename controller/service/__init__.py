"""The table service: wires the shoe reader, the chip camera, the round engine, the audit
store and the dealer's touchscreen into one process (`floorctl run`, `floorctl demo`)."""
