# The host intent with DCQCN on a fabdcb netdev of the bnxt personality (drivers/host
# fabdcb_bnxt_test.go puts the netdev and its bnxt_re RDMA device name in place of FABDCB_NIC and
# FABDCB_RDMA): congestion control and CNP marking through bnxt_re's configfs.
fabric "vmdcb" {
  transport          = "rocev2"
  mtu                = 4200
  trust              = "dscp"
  congestion_control = "dcqcn"
}
class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = true
  bandwidth = 60
  ecn {
    min         = "150KB"
    max         = "1.5MB"
    probability = 100
  }
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
    model     = "bcm57508"
    device    = "FABDCB_RDMA"
    addresses = ["198.18.10.1/24"]
    # fabdcb plays the bnxt_re device through its configfs only: no RDMA device in
    # /sys/class/infiniband, so rdma_cm's defaults have nowhere to go.
    accept_not_in_effect = {
      "roce_mode" = "fabdcb emulates bnxt_re's configfs, not an RDMA device"
      "tos"       = "fabdcb emulates bnxt_re's configfs, not an RDMA device"
    }
  }
}
