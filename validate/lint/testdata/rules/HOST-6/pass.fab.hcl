# HOST-6 pass: a lossy RoCE class under ecn-only; DCQCN covers its priority on
# every NIC (vendor default mask, or an explicit one: RoCE is always added).
fabric "t" {
  transport          = "rocev2"
  congestion_control = "ecn-only"
}

class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = false
  bandwidth = 50
  ecn {
    min         = "150KB"
    max         = "1500KB"
    probability = 100
  }
}

class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}

class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 50
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device           = "mlx5_0"
    model            = "connectx-7"
    addresses        = ["10.0.0.1/31"]
    dcqcn_priorities = [3]
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.1.1/31"]
    dcqcn_priorities = [5]
  }
}
