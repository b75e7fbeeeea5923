#include "server/client_socket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

namespace skiff {

bool socket_endpoint(int fd, bool peer, std::string& addr, int& port) {
  sockaddr_storage a{};
  socklen_t length = sizeof a;
  auto* name = reinterpret_cast<sockaddr*>(&a);
  if ((peer ? getpeername(fd, name, &length) : getsockname(fd, name, &length)) != 0) return false;
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    port = ntohs(in.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    port = ntohs(in6.sin6_port);
  } else {
    return false;
  }
  addr = text;
  return true;
}

namespace {

bool connects(int fd, const std::string& remote_addr, int remote_port, const std::string& local_addr,
              int local_port) {
  std::string addr;
  int port = -1;
  if (!socket_endpoint(fd, /*peer=*/true, addr, port) || port != remote_port || addr != remote_addr) return false;
  return socket_endpoint(fd, /*peer=*/false, addr, port) && port == local_port && addr == local_addr;
}

}  // namespace

ClientSocket::ClientSocket(const std::string& remote_addr, int remote_port, const std::string& local_addr,
                           int local_port) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return;
  const int listing = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == listing) continue;
    if (connects(static_cast<int>(fd), remote_addr, remote_port, local_addr, local_port)) {
      fd_ = static_cast<int>(fd);
      break;
    }
  }
  closedir(dir);
}

bool ClientSocket::disconnected() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
  // Readable: more data from the client (pipelining), or end of stream.
  char byte;
  return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

}  // namespace skiff
