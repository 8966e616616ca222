# GPU nodes: one host block expands to gpu01..gpu32 (for_each over local.gpu_nodes, a map of
# name => index), and one dynamic block expands to the 8 rail NICs of each.
#
# The node is an 8-GPU HGX/DGX-class server: two 56-core sockets (224 threads with SMT) and
# 8 ConnectX-7 400G NICs, four behind each socket's PCIe switches.

host "gpu" {
  for_each = local.gpu_nodes
  name     = each.key # gpu01 .. gpu32; each.value is the 0-based node index

  address     = cidrhost(var.host_mgmt_prefix, 11 + each.value) # gpu01 = 10.0.1.11
  credentials = "gpu-nodes"
  sudo        = true # DCB, sysfs and configfs writes need root; the login user does not have it
  role        = "gpu"

  # Declared NUMA topology (node => CPUs, as lscpu prints it): lint checks each NIC's
  # numa_node below against it, and test threads are pinned to the NIC's node.
  numa_nodes = {
    "0" = "0-55,112-167"
    "1" = "56-111,168-223"
  }

  # irqbalance would spread NIC interrupts across both sockets; stop it so fabctl's per-NIC
  # IRQ pinning (numa = "auto" below) holds.
  irqbalance = "stop"

  # Where fabctl writes NCCL's environment (NCCL_IB_TC, NCCL_IB_GID_INDEX, HCA list); NCCL
  # reads /etc/nccl.conf on start.
  nccl_env_file = "/etc/nccl.conf"

  # Queue pair sizing that NCCL-like traffic and fabctl's own traffic test use. ConnectX-7
  # allows max_qp_wr 32768, max_sge 30, inline 964 B, so all of this is well inside the device.
  qp {
    max_send_wr = 1024
    max_recv_wr = 1024
    max_sge     = 2
    max_inline  = 0 # large RDMA writes: inline would only cost CPU
    # At least (send + recv) x QPs per connection = 2048 x 4 outstanding completions.
    cq_depth = 16384
    # 4 QPs per peer (NCCL_IB_QPS_PER_CONNECTION=4): more UDP source ports, better ECMP spread
    # over the 64 uplinks of each leaf.
    qps_per_connection = 4
  }

  # Rail r: netdev rdma<r> (a udev rule renames the NICs by PCI slot, so rail r has the same
  # name on every node), RDMA device mlx5_<r>, on a /31 shared with its leaf port. The leaf
  # side is the even address of the /31 (switch port addressing is outside the spec today).
  dynamic "nic" {
    for_each = range(local.rails)
    labels   = ["rdma${nic.value}"]

    content {
      device    = "mlx5_${nic.value}"
      model     = "connectx-7" # selects the device limits the QP sizing is checked against
      speed     = "400G"
      numa_node = floor(nic.value / 4) # rails 0-3 on socket 0, rails 4-7 on socket 1
      numa      = "auto"               # pin IRQs and test threads to that node
      # /20 per rail out of the /16, then /31 number <node index> inside it:
      # gpu01 rdma0 = 10.128.0.1/31, gpu02 rdma0 = 10.128.0.3/31, gpu01 rdma1 = 10.128.16.1/31.
      addresses = [
        "${cidrhost(cidrsubnet(cidrsubnet(var.backend_prefix, 4, nic.value), 11, each.value), 1)}/31",
      ]
      # trust, pfc and ecn are not set: they derive from the fabric (trust dscp, PFC on the
      # lossless priority 3, DCQCN reaction/notification points on), which is what the
      # switches get too. Setting them here would only add a way to disagree.
    }
  }
}
