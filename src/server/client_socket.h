// Noticing a client that went away. cpp-httplib 0.11 (Debian 12's) gives a
// handler no handle on its connection, and a write to a closed socket
// succeeds once before it fails; so a handler finds its socket by the
// connection's addresses and polls it for the peer's hang-up while it waits.
#pragma once
#include <string>

namespace skiff {

// The address and port of a socket's peer (peer) or its own end, written as
// inet_ntop does; false when fd is no IPv4/IPv6 socket.
bool socket_endpoint(int fd, bool peer, std::string& addr, int& port);

class ClientSocket {
 public:
  // The socket of this process connected from remote to local; -1 when none
  // is found (then disconnected() is always false).
  ClientSocket(const std::string& remote_addr, int remote_port, const std::string& local_addr,
               int local_port);
  // The peer closed or reset the connection. Never blocks.
  bool disconnected() const;

 private:
  int fd_ = -1;
};

}  // namespace skiff
