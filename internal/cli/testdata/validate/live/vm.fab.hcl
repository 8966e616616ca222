# Two soft-RoCE "hosts" on this machine (the VM testbed's shape), with a
# bandwidth ring and an all-pairs latency test.
fabric "vm" {
  transport = "rocev2"
  mtu       = 9000
}

host "ha" {
  connect = "local"
  nic "fa" {
    device    = "rxe_fa"
    model     = "rxe"
    addresses = ["198.18.0.1/24"]
    speed     = "10G"
  }
}

host "hb" {
  connect = "local"
  nic "fb" {
    device    = "rxe_fb"
    model     = "rxe"
    addresses = ["198.18.0.2/24"]
    speed     = "10G"
  }
}

validate "bw" {
  pattern       = "ring"
  op            = "write"
  message_size  = "64KiB"
  iterations    = 2000
  min_bandwidth = "100M"
}

validate "lat" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "2B"
  iterations   = 1000
  max_p99      = "5ms"
}
