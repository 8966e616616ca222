# Differential test counterexample (fabric 17, seed 20261128, shrunk): lint-clean
# before PLAT-1; SONiC's renderer wrote it and libyang refused the payload:
#   spine (sonic): the sonic models refuse the payload: /sonic-pfcwd:sonic-pfcwd/PFC_WD/PFC_WD_LIST[ifname='Ethernet0']/detection_time: detection_time must be greater than or equal to POLL_INTERVAL [must (not(boolean(current()/../../PFC_WD_LIST[ifname='GLOBAL'])) or (current() >= current()/../../PFC_WD_LIST[ifname='GLOBAL']/POLL_INTERVAL))]
# expect: PLAT-1
fabric "diff" {
  transport = "rocev2"
  pfc_watchdog {
    detect = "100ms"
    poll = "200ms"
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

switch "leaf-openconfig" {
  platform = "openconfig"
  address = "192.0.2.1"
  credentials = "c"
  role = "leaf"
  port "Ethernet0" {
  }
  port "Ethernet1" {
  }
  port "Ethernet2" {
  }
}

host "h-openconfig-0" {
  address = "198.51.100.10"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

link {
  endpoints = ["leaf-openconfig:Ethernet0", "h-openconfig-0:eth1"]
  speed = "400G"
}

host "h-openconfig-1" {
  address = "198.51.100.11"
  credentials = "c"
  nic "eth1" {
    device = "mlx5_0"
    model = "connectx-7"
    addresses = ["10.0.1.1/31"]
  }
}

link {
  endpoints = ["leaf-openconfig:Ethernet1", "h-openconfig-1:eth1"]
  speed = "400G"
}

link {
  endpoints = ["leaf-openconfig:Ethernet2", "spine:Ethernet0"]
  speed = "400G"
}
