fabric "t" {}

credentials "lab" {
  username = "admin"
  password = env("FAB_TEST_PASSWORD")
}

switch "leaf1" {
  platform    = "sonic"
  address     = "192.0.2.1"
  role        = "leaf"
  credentials = "lab"
}
switch "leaf2" {
  platform    = "sonic"
  address     = "192.0.2.12"
  role        = "leaf"
  credentials = "lab"
}
switch "leaf3" {
  platform    = "sonic"
  address     = "192.0.2.13"
  role        = "leaf"
  credentials = "lab"
}
switch "leaf4" {
  platform    = "sonic"
  address     = "192.0.2.14"
  role        = "leaf"
  credentials = "lab"
}
switch "leaf5" {
  platform    = "sonic"
  address     = "192.0.2.15"
  role        = "leaf"
  credentials = "lab"
}
switch "leaf6" {
  platform    = "sonic"
  address     = "192.0.2.16"
  role        = "leaf"
  credentials = "lab"
}
switch "leaf7" {
  platform    = "sonic"
  address     = "192.0.2.17"
  role        = "leaf"
  credentials = "lab"
}
switch "leaf8" {
  platform    = "sonic"
  address     = "192.0.2.18"
  role        = "leaf"
  credentials = "lab"
}
switch "spine1" {
  platform    = "eos"
  address     = "192.0.2.2"
  role        = "spine"
  credentials = "lab"
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}
link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
link {
  endpoints    = ["leaf1:Ethernet1", "spine1:Ethernet1"]
  speed        = "400G"
  cable_length = "10m"
}
