# Differential test counterexample (fabric 12, seed 20261128, shrunk): lint-clean
# before PLAT-1, and plan refused it:
#   leaf-srlinux (srlinux) refuses to render: leaf-srlinux: port ethernet-1/1: IP MTU 9500 is port mtu 9514 (+14 bytes of Ethernet header and VLAN tags), outside the 7220 IXR's 1500..9412 (srl_nokia-interfaces mtu)
# expect: PLAT-1
fabric "diff" {
  transport = "rocev2"
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

switch "leaf-srlinux" {
  platform = "srlinux"
  address = "192.0.2.1"
  credentials = "c"
  role = "leaf"
  port "ethernet-1/1" {
    mtu = 9500
  }
  port "ethernet-1/2" {
  }
  port "ethernet-1/3" {
  }
}

host "h-srlinux-0" {
  address = "198.51.100.10"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

link {
  endpoints = ["leaf-srlinux:ethernet-1/1", "h-srlinux-0:eth1"]
  speed = "25G"
}

host "h-srlinux-1" {
  address = "198.51.100.11"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.1.1/31"]
  }
}

link {
  endpoints = ["leaf-srlinux:ethernet-1/2", "h-srlinux-1:eth1"]
  speed = "25G"
}

link {
  endpoints = ["leaf-srlinux:ethernet-1/3", "spine:Ethernet0"]
  speed = "400G"
}
