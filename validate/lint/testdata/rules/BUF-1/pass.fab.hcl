# BUF-1 pass: 200KB of headroom covers 100G/3m (59KB) and 400G/10m (185KB)
# at MTU 9000; the spine leaves headroom to the NOS, so its unmeasured
# cable is not a concern; a long cable is accepted with a reason.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
  buffer {
    total    = "64MB"
    headroom = "200KB"
  }
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
}

switch "spine2" {
  platform = "sonic"
  address  = "192.0.2.3"
  role     = "spine"
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}

link {
  endpoints    = ["spine1:Ethernet8", "spine2:Ethernet8"]
  speed        = "400G"
  cable_length = "300m"
  lint_ignore  = { "BUF-1" = "DCI run, headroom profile set by hand on both ends" }
}
