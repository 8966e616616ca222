# Differential test counterexample (fabric 1484, seed 1, shrunk): lint-clean
# with PLAT-1's first cut (SAFE-1 checks SR Linux's timer ranges only where
# the watchdog runs on a port), and plan refused it:
#   leaf-srlinux (srlinux) refuses to render: leaf-srlinux: pfc_watchdog detect 2s: SR Linux's deadlock detection-timer takes whole milliseconds in 10ms..1500ms
# expect: PLAT-1
fabric "diff" {
  transport = "iwarp"
  pfc_watchdog {
    detect = "2s"
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

switch "leaf-srlinux" {
  platform = "srlinux"
  address = "192.0.2.1"
  credentials = "c"
  role = "leaf"
  port "ethernet-1/1" {
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
  speed = "100G"
}

link {
  endpoints = ["leaf-srlinux:ethernet-1/3", "spine:Ethernet0"]
  speed = "400G"
}
