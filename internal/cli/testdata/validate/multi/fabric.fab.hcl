fabric "pod2" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "srlinux"
  address  = "192.0.2.1"
}
