# A spec written for production devices (management addresses, SSH hosts with a key, EOS
# 400G port names), as a user brings it to the testbed: TestCopy (copy_test.go).
fabric "pod-a" {
  transport = "rocev2"
  mtu       = 9000
}

credentials "switches" {
  username    = "admin"
  password    = env("POD_SWITCH_PASSWORD")
}

credentials "nodes" {
  username    = "root"
  private_key = file("~/.ssh/id_ed25519")
}

switch "leaf1" {
  platform    = "sonic"
  address     = "10.0.0.11"
  credentials = "switches"
}

switch "leaf2" {
  platform    = "sonic"
  address     = "10.0.0.12"
  credentials = "switches"
}

switch "spine1" {
  platform    = "eos"
  address     = "10.0.0.21"
  credentials = "switches"
  role        = "spine"
}

host "gpu01" {
  address     = "10.0.1.11"
  credentials = "nodes"
  nic "ens1np0" {
    model     = "connectx-7"
    addresses = ["10.128.0.1/31"]
  }
  nic "ens2np0" {
    model     = "connectx-7"
    addresses = ["10.128.1.1/31"]
  }
}

host "gpu02" {
  address     = "10.0.1.12"
  credentials = "nodes"
  nic "ens1np0" {
    model     = "connectx-7"
    addresses = ["10.128.0.3/31"]
  }
  nic "ens2np0" {
    model     = "connectx-7"
    addresses = ["10.128.1.3/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "gpu01:ens1np0"]
  speed        = "400G"
  cable_length = "3m"
}
link {
  endpoints    = ["leaf2:Ethernet0", "gpu01:ens2np0"]
  speed        = "400G"
  cable_length = "3m"
}
link {
  endpoints    = ["leaf1:Ethernet8", "gpu02:ens1np0"]
  speed        = "400G"
  cable_length = "3m"
}
link {
  endpoints    = ["leaf2:Ethernet8", "gpu02:ens2np0"]
  speed        = "400G"
  cable_length = "3m"
}
link {
  endpoints    = ["leaf1:Ethernet256", "spine1:Ethernet1/1"]
  speed        = "400G"
  cable_length = "30m"
}
link {
  endpoints    = ["leaf2:Ethernet256", "spine1:Ethernet2/1"]
  speed        = "400G"
  cable_length = "30m"
}
