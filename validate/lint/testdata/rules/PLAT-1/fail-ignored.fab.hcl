# PLAT-1 fail: lint_ignore cannot silence it (the renderer or the device
# refuses the value whatever the reason): an EOS port MTU above 9214 stays an
# error under the switch's and the fabric's lint_ignore.
fabric "t" {
  transport   = "rocev2"
  lint_ignore = { "PLAT-1" = "we know better" }
}

credentials "ssh" {
  username = "admin"
  password = env("SWITCH_PASSWORD")
}

switch "leaf1" {
  platform    = "eos"
  address     = "192.0.2.2"
  credentials = "ssh"
  role        = "leaf"
  lint_ignore = { "PLAT-1" = "we know better" }
  port "Ethernet1" {
    mtu = 9300 # expect: PLAT-1
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

link {
  endpoints    = ["leaf1:Ethernet1", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
