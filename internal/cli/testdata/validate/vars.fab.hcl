variable "leaf_address" {
  type = string
}

fabric "pod1" {}

switch "leaf1" {
  platform = "sonic"
  address  = var.leaf_address
}
