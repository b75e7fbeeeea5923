// The chat page (src/server/webui/: HTML, CSS and JavaScript, no build step),
// compiled into the binary by cmake/embed_files.cmake and served at / unless
// `skiff serve --no-webui`. The page itself needs no API key (it holds no
// secret, as llama-server's); the API routes it calls still do, and the page
// asks for the key when they answer 401.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "server/http_message.h"

namespace skiff {

struct EmbeddedFile {
  std::string_view name;  // relative to src/server/webui
  std::string_view bytes;
};

// The page's files, in the generated webui_files.cpp.
std::span<const EmbeddedFile> webui_files();

// Answers a GET for one of the page's paths ("/", "/index.html", "/webui.js",
// ...) with its bytes and headers; false for any other path.
bool serve_webui(const std::string& path, HttpResponse& res);

}  // namespace skiff
