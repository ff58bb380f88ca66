"""tiengow: Tien Gow (天九) for AI research."""
