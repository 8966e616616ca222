package sshtransport

// SONiC is a scrapligo v1.4 platform definition for a SONiC switch's
// bash login shell (scrapligo v1.4.x ships none): the admin prompt
// "admin@sonic:~$", no privilege escalation (config commands run with
// sudo, which SONiC's admin may use without a password), and the error
// texts of bash and sonic-utilities' click commands as failures.
var SONiC = []byte(`---
platform-type: 'sonic'
default:
  driver-type: 'network'
  privilege-levels:
    exec:
      name: 'exec'
      pattern: '(?im)^[\w.\-]+@[\w.\-]+:\S+\$\s*$'
      previous-priv:
      deescalate:
      escalate:
      escalate-auth: false
      escalate-prompt:
  default-desired-privilege-level: 'exec'
  failed-when-contains:
    - 'command not found'
    - 'Failed to '
    - 'Root privileges are required'
    - 'No such file or directory'
    - 'Try "config'
    - 'Try "show'
  textfsm-platform: ''
  network-on-open:
    - operation: 'acquire-priv'
  network-on-close:
    - operation: 'channel.write'
      input: 'exit'
    - operation: 'channel.return'
`)
