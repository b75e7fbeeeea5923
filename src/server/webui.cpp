#include "server/webui.h"

#include <utility>

namespace skiff {

namespace {

std::string_view content_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  return "application/octet-stream";
}

// Revalidated on every load (no-cache), so that a new binary's page is never
// mixed with an old cached script. Scripts and styles only from the page's own
// files, never inline: were a reply's text ever to reach the DOM as HTML, its
// handlers would not run. Requests go only to the server that served the page.
constexpr std::pair<const char*, const char*> kHeaders[] = {
    {"Cache-Control", "no-cache"},
    {"Content-Security-Policy",
     "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
     "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
};

}  // namespace

bool serve_webui(const std::string& path, HttpResponse& res) {
  if (!path.starts_with("/")) return false;
  const std::string_view name = path == "/" ? std::string_view("index.html") : std::string_view(path).substr(1);
  for (const EmbeddedFile& file : webui_files()) {
    if (file.name != name) continue;
    res.set_content(std::string(file.bytes), std::string(content_type(name)));
    for (const auto& [header, value] : kHeaders) res.set_header(header, value);
    return true;
  }
  return false;
}

}  // namespace skiff
