# AI training pod: RoCEv2 backend fabric for 32 GPU nodes with 8 x 400G rail NICs each.
#
# This directory is one spec: fabctl reads every *.fab.hcl file in it and merges them, so the
# files are split by subject only (names do not matter to fabctl):
#
#   fabric.fab.hcl    variables, shared locals, the fabric, traffic classes, credentials
#   switches.fab.hcl  4 leaves (one per NOS) and 2 spines
#   hosts.fab.hcl     32 GPU nodes, one host block with for_each, one dynamic nic block
#   links.fab.hcl     256 host links and 256 leaf-spine links, generated from locals
#   validate.fab.hcl  the traffic tests that prove the fabric
#
# Check it without touching a device:
#
#   fabctl validate --static examples/ai-pod
#   fabctl validate --static --var gpu_nodes=16 examples/ai-pod   # a half-populated pod
#   FAB_VAR_gpu_nodes=8 fabctl validate --static examples/ai-pod  # same, from the environment
#
# Design in one paragraph. Rail-optimised two-tier Clos. Every GPU node has 8 ConnectX-7 NICs
# at 400G, one per GPU ("rail"). Four leaves carry two rails each (leaf1: rails 0-1, leaf2:
# rails 2-3, ...), so rail traffic of the same index - the bulk of an NCCL ring or tree - stays
# on one leaf, one hop. All six switches are 51.2T boxes with 64 x 800G OSFP cages run as
# 128 x 400G (2 x 400G breakout per cage): per leaf 64 x 400G down to the hosts (cages 1-32) and
# 64 x 400G up (cages 33-64), 32 to each spine, so the pod is non-blocking (1:1). Each spine
# takes 4 leaves x 32 = 128 x 400G, again exactly 64 cages. 256 host links + 256 uplinks
# = 512 links.

# ---------------------------------------------------------------------------------------------
# Variables: set with -var name=value, -var-file FILE or FAB_VAR_<name>; precedence is
# default < FAB_VAR_ environment < -var-file < -var.

variable "gpu_nodes" {
  type        = number
  default     = 32
  description = "GPU nodes in the pod (each takes one 800G cage = 2 x 400G on each leaf)."

  validation {
    # 32 cages per leaf face the hosts; the other 32 are uplinks. A 33rd node needs a third
    # tier or bigger leaves, not a different number here.
    condition     = var.gpu_nodes >= 1 && var.gpu_nodes <= 32 && floor(var.gpu_nodes) == var.gpu_nodes
    error_message = "gpu_nodes must be a whole number from 1 to 32 (the leaves have 32 host-facing 800G cages)."
  }
}

variable "backend_prefix" {
  type        = string
  default     = "10.128.0.0/16"
  description = "Address block of the RDMA backend: one /20 per rail, one /31 per host NIC."

  validation {
    # The /16 is cut into 16 x /20 (8 used, one per rail) and each /20 into 2048 x /31.
    condition     = can(cidrhost(var.backend_prefix, 0)) && can(regex("/16$", var.backend_prefix))
    error_message = "backend_prefix must be an IPv4 /16 such as \"10.128.0.0/16\"."
  }
}

variable "switch_mgmt_prefix" {
  type        = string
  default     = "10.0.0.0/24"
  description = "Out-of-band management network of the switches."
}

variable "host_mgmt_prefix" {
  type        = string
  default     = "10.0.1.0/24"
  description = "Management (BMC-adjacent, 1/10G frontend) network of the GPU nodes."
}

variable "switch_user" {
  type    = string
  default = "fabctl"
}

# ---------------------------------------------------------------------------------------------
# Shared locals. Port names are generated per NOS because each one names a 2 x 400G breakout of
# an 800G cage differently; index i (0..127) is "cage i/2 + 1, half i%2".

locals {
  rails = 8

  gpu_nodes = { for i in range(var.gpu_nodes) : format("gpu%02d", i + 1) => i }

  port_names = {
    # SONiC on Tomahawk 5: 8 lanes per cage, ports named by first lane -> Ethernet0, Ethernet4, Ethernet8, ...
    sonic = [for i in range(128) : format("Ethernet%d", i * 4)]
    # Cumulus Linux: breakout ports are swp<cage>s<n>, n from 0.
    cumulus = [for i in range(128) : format("swp%ds%d", floor(i / 2) + 1, i % 2)]
    # EOS: an 8-lane port split in two is Ethernet<cage>/1 and Ethernet<cage>/5 (first lane of each half).
    eos = [for i in range(128) : format("Ethernet%d/%d", floor(i / 2) + 1, (i % 2) * 4 + 1)]
    # NX-OS: breakout adds a third level, Ethernet1/<cage>/<n>, n from 1.
    nxos = [for i in range(128) : format("Ethernet1/%d/%d", floor(i / 2) + 1, (i % 2) + 1)]
    # SR Linux: ethernet-<slot>/<cage>/<n> once the connector is broken out.
    srlinux = [for i in range(128) : format("ethernet-1/%d/%d", floor(i / 2) + 1, (i % 2) + 1)]
  }
}

# ---------------------------------------------------------------------------------------------

fabric "ai-pod" {
  transport = "rocev2"

  # IP MTU on hosts and routed switch ports. The NOS renderers add their own L2 overhead
  # (SONiC 9100, EOS 9214, NX-OS 9216, SR Linux 9232 incl. Ethernet header): the spec states
  # the one number that must agree end to end. 9000 leaves room for a 4096-byte RoCE MTU.
  mtu = 9000

  # RDMA path MTU: the largest IB enum value. 4096 + RoCEv2 headers (IP 20 + UDP 8 + BTH 12
  # + ICRC 4 + extension headers) fits in 9000 with room to spare.
  rdma_mtu = 4096

  # Routed L3 fabric: classify on DSCP, which survives routing (PCP lives in a VLAN tag that
  # each routed hop strips).
  trust = "dscp"

  # DCQCN: switches ECN-mark the RoCE queue, receivers send CNPs, senders slow down - before
  # PFC has to pause anybody. PFC stays as the last-resort lossless guarantee.
  congestion_control = "dcqcn"

  # The ToS byte rdma_cm and NCCL (NCCL_IB_TC) put on RoCE packets: DSCP 26 << 2 | ECT(0)
  # = 106. It is what fabctl would derive from the roce class anyway; stating it makes the
  # host side (configfs default_roce_tos, nccl.conf) greppable.
  rdma_tos = 106

  # Storm and deadlock guard: a port that stays paused for 200 ms is taken out of lossless
  # mode (its lossless queue drops) and restored 400 ms after the storm ends. Inside every
  # vendor's range (SONiC detect 100-5000 ms, restore 100-60000 ms).
  pfc_watchdog {
    enabled = true
    detect  = "200ms"
    restore = "400ms"
    poll    = "100ms"
    action  = "drop"
  }
}

# ---------------------------------------------------------------------------------------------
# Traffic classes. These three are exactly fabctl's RoCEv2 defaults (see docs/spec.md); they are
# written out so the pod's QoS is reviewable in one place and survives a change of defaults.

class "roce" {
  role     = "rdma"
  priority = 3
  # DSCP 26 is the NVIDIA/Cumulus convention. NX-OS AI blueprints claim the whole CS3 block
  # (dscp = ["24-31"]); either works as long as hosts mark what the switches classify.
  dscp      = [26]
  lossless  = true # PFC no-drop on priority 3 on every hop
  bandwidth = 50   # ETS: half of the port guaranteed to RDMA under contention

  # Mark-only RED on the RoCE queue: start marking at 150 KB, mark every packet at 1.5 MB.
  # Decimal units (1 KB = 1000 B) as the switch vendors use them. These are the Cumulus
  # "nv set qos roce" values; they sit well below the PFC pause point, so ECN acts first.
  ecn {
    min         = "150KB"
    max         = "1.5MB"
    probability = "100%"
  }
}

class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  # CNPs are tiny and latency-critical: strict priority, not lossless (a paused CNP is a late
  # CNP), and never on the data priority.
  strict = true
}

class "default" {
  role      = "other"
  priority  = 0
  default   = true # every DSCP not claimed above (TCP, storage, management) lands here
  bandwidth = 50
}

# ---------------------------------------------------------------------------------------------
# Credentials: references only. env("X") and file("path") are read when fabctl connects, never
# stored in the spec, a plan or a log. A literal password here is a load error.

credentials "switch-ssh" {
  username    = var.switch_user
  password    = env("FABCTL_SWITCH_PASSWORD")
  known_hosts = "/etc/fabctl/known_hosts" # SSH host keys are verified, not trusted on first use
}

credentials "switch-gnmi" {
  username = var.switch_user
  password = env("FABCTL_SWITCH_PASSWORD")
  ca_file  = "/etc/fabctl/gnmi-ca.pem" # gNMI over TLS, server certificate checked against this CA
}

credentials "gpu-nodes" {
  username    = "fabctl"
  private_key = file("/etc/fabctl/id_ed25519")
  known_hosts = "/etc/fabctl/known_hosts"
}
