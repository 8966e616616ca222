# QOS-5 fail: three lossless priorities where the fabric allows two (the
# class that adds the third is flagged once), and an Intel E810 host that
# supports PFC on one traffic class only.
fabric "t" {
  transport = "rocev2"
}

class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 30
  ecn {
    min = "150KB"
    max = "1.5MB"
  }
}

class "storage" {
  role      = "rdma"
  priority  = 4
  dscp      = [34]
  lossless  = true
  bandwidth = 30
  ecn {
    min = "150KB"
    max = "1.5MB"
  }
}

class "ckpt" {
  role      = "rdma"
  priority  = 5
  dscp      = [40]
  lossless  = true # expect: QOS-5
  bandwidth = 20
  ecn {
    min = "150KB"
    max = "1.5MB"
  }
}

class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}

class "default" {
  priority  = 0
  default   = true
  bandwidth = 20
}

switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  role     = "leaf"
}

switch "spine1" {
  platform = "sonic"
  address  = "192.0.2.2"
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

host "h2" {
  address = "192.0.2.11"
  nic "eth1" { # expect: QOS-5
    device    = "irdma0"
    model     = "e810"
    addresses = ["10.0.0.3/31"]
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
  endpoints    = ["leaf1:Ethernet48", "spine1:Ethernet0"]
  speed        = "400G"
  cable_length = "10m"
}
