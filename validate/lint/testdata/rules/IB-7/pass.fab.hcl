# IB-7 pass: a 2-level fat tree, adapters on the leaves, every leaf cabled
# up to every spine: up/down routing has no credit loop.
fabric "t" {
  transport = "infiniband"
}

switch "spine1" {
  platform = "infiniband"
  role     = "spine"
  ports    = 8
}

switch "spine2" {
  platform = "infiniband"
  role     = "spine"
  ports    = 8
}

switch "leaf1" {
  platform = "infiniband"
  role     = "leaf"
  ports    = 8
}

switch "leaf2" {
  platform = "infiniband"
  role     = "leaf"
  ports    = 8
}

host "h1" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0002c90300000001"
  }
}

host "h2" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0002c90300000011"
  }
}

infiniband {
  subnet_manager = "h1"
}

link {
  endpoints = ["leaf1:1", "h1:ib0"]
  speed     = "HDR"
  width     = "4x"
}

link {
  endpoints = ["leaf2:1", "h2:ib0"]
  speed     = "HDR"
  width     = "4x"
}

link {
  for_each  = { for p in setproduct(["leaf1", "leaf2"], ["spine1", "spine2"]) : "${p[0]}-${p[1]}" => p }
  endpoints = ["${each.value[0]}:${each.value[1] == "spine1" ? 7 : 8}", "${each.value[1]}:${each.value[0] == "leaf1" ? 1 : 2}"]
  speed     = "HDR"
  width     = "4x"
}
