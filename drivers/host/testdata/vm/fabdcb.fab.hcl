# The host intent the VM testbed applies to a fabdcb netdev (drivers/host fabdcb_test.go and
# testbed/vm/sections/dcb.sh put the device name in place of FABDCB_NIC).
fabric "vmdcb" {
  transport = "rocev2"
  mtu       = 4200
  trust     = "dscp"
  # The host side is what the VM tests prove; no switch marks ECN here.
  congestion_control = "pfc-only"
}
class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 60
}
class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}
class "bulk" {
  priority  = 0
  default   = true
  bandwidth = 40
}
host "vm" {
  connect = "local"
  nic "FABDCB_NIC" {
    addresses = ["198.18.10.1/24", "2001:db8:10::1/64"]
    # fabdcb is a netdev with no RDMA device on it: rdma_cm's defaults have nowhere to go.
    accept_not_in_effect = {
      "roce_mode" = "fabdcb has no RDMA device: the VM tests prove the NIC's DCB side"
      "tos"       = "fabdcb has no RDMA device: the VM tests prove the NIC's DCB side"
    }
  }
}
