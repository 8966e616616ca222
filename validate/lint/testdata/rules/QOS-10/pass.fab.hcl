# QOS-10 pass: unmanaged settings that only tune the devices (MTU, the
# watchdog's timers, IRQ placement) leave every class proven.
fabric "t" {
  transport = "rocev2"
}

switch "leaf1" {
  platform  = "sonic"
  address   = "192.0.2.1"
  role      = "leaf"
  unmanaged = { "port/*/mtu" = "the site's MTU policy", "pfcwd/detect" = "the NOS default" }
}

host "h1" {
  address   = "192.0.2.10"
  unmanaged = { "nic/*/irq_cpus" = "irqbalance places them" }
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
    unmanaged = { "mtu" = "set by the cluster's network operator" }
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
