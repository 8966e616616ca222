# BUF-2 fail: leaf1 reserves 3 x 200KB (rounded to 256 B cells) + the 400G
# uplink's 200KB = 800.768KB of headroom in a 1MB buffer with a 300KB
# floor; spine1's floor takes its whole buffer.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
  buffer {
    total     = "1MB" # expect: BUF-2
    reserved  = "300KB"
    headroom  = "200KB"
    cell_size = "256B"
  }
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
  role     = "spine"
  buffer {
    total    = "32MB"
    reserved = "32MB" # expect: BUF-2
  }
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
  }
}

host "h3" {
  address = "192.0.2.12"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.5/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet4", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet8", "h3:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
