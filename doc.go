package edge
