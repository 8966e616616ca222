# Differential test counterexample (fabric 215, seed 20261128, shrunk): lint-clean
# before PLAT-1, and plan refused it:
#   leaf-eos (eos) refuses to render: leaf-eos: PFC watchdog action "alert": this driver renders EOS's `override action drop` only
# expect: PLAT-1
fabric "diff" {
  transport = "rocev2"
  pfc_watchdog {
    action = "alert"
  }
}

credentials "c" {
  username = "admin"
  password = env("DIFF_PW")
}

switch "spine" {
  platform = "sonic"
  address = "192.0.2.250"
  credentials = "c"
  role = "spine"
}

switch "leaf-eos" {
  platform = "eos"
  address = "192.0.2.1"
  credentials = "c"
  role = "leaf"
  port "Ethernet1" {
  }
  port "Ethernet2" {
  }
  port "Ethernet3" {
  }
}

host "h-eos-0" {
  address = "198.51.100.10"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

link {
  endpoints = ["leaf-eos:Ethernet1", "h-eos-0:eth1"]
  speed = "100G"
}

host "h-eos-1" {
  address = "198.51.100.11"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.1.1/31"]
  }
}

link {
  endpoints = ["leaf-eos:Ethernet2", "h-eos-1:eth1"]
  speed = "100G"
}

link {
  endpoints = ["leaf-eos:Ethernet3", "spine:Ethernet0"]
  speed = "400G"
}
