#include "cli/completion.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace sv {

namespace {

// What a value of an option (or a positional argument) is, as its type name says: "FILE",
// "SCENE" and an executable's input are files, "DIR" a directory, "CMD" a command; "{a,b}"
// (CLI::IsMember, after the type: "TEXT:{a,b}") and '["a","b"]' (a schema's enum) are choices.
struct ValueKind {
  std::string kind;  // files, dirs, commands, words, or empty: nothing to offer
  std::vector<std::string> words;
};

bool safe_word(const std::string& w) {
  if (w.empty()) return false;
  for (char c : w)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._-+:/@%,", c))) return false;
  return true;
}

std::vector<std::string> split_choices(std::string body) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= body.size()) {
    size_t end = body.find(',', start);
    if (end == std::string::npos) end = body.size();
    std::string w = body.substr(start, end - start);
    while (!w.empty() && (w.front() == ' ' || w.front() == '"')) w.erase(0, 1);
    while (!w.empty() && (w.back() == ' ' || w.back() == '"')) w.pop_back();
    if (safe_word(w)) out.push_back(w);
    start = end + 1;
  }
  return out;
}

ValueKind value_kind(const CLI::Option& o) {
  const std::string type = o.get_type_name();
  ValueKind v;
  const size_t brace = type.find('{'), bracket = type.find('[');
  if (type.empty()) {
  } else if (brace != std::string::npos && type.back() == '}') {
    v.words = split_choices(type.substr(brace + 1, type.size() - brace - 2));
  } else if (bracket == 0 && type.back() == ']' && type.find('|') == std::string::npos) {
    v.words = split_choices(type.substr(1, type.size() - 2));
  }
  if (!v.words.empty()) {
    v.kind = "words";
    return v;
  }
  const std::string base = type.substr(0, type.find(':'));
  if (base == "FILE" || base == "SCENE" || base == "PATH" || (o.get_positional() && o.get_name() == "input"))
    v.kind = "files";
  else if (base == "DIR" || o.get_name() == "--output-dir" || o.get_name() == "dir")
    v.kind = "dirs";
  else if (base == "CMD")
    v.kind = "commands";
  return v;
}

bool takes_value(const CLI::Option& o) { return o.get_expected_min() > 0; }  // as --params tells flags
bool hidden(const CLI::Option& o) { return o.get_group().empty(); }

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

struct Node {
  std::string path;  // subcommand names from the top, joined by '/'; "" for the executable
  CLI::App* app;
};

void collect(CLI::App* app, const std::string& path, std::vector<Node>& out) {
  out.push_back({path, app});
  for (CLI::App* sub : app->get_subcommands([](CLI::App* s) { return !s->get_name().empty() && !s->get_disabled(); }))
    collect(sub, path.empty() ? sub->get_name() : path + "/" + sub->get_name(), out);
}

// The options a command line at this node may give: its own, and those of the commands above it
// while it falls through to them (sv-commit log --store DIR).
std::vector<const CLI::Option*> options_at(CLI::App* app) {
  std::vector<const CLI::Option*> out;
  for (CLI::App* a = app; a; a = a->get_fallthrough() ? a->get_parent() : nullptr)
    for (const CLI::Option* o : a->get_options())
      if (!o->get_positional() && !hidden(*o)) {
        bool seen = false;  // a subcommand's own --help hides the one above it
        for (const CLI::Option* p : out) seen = seen || p->get_name() == o->get_name();
        if (!seen) out.push_back(o);
      }
  return out;
}

std::vector<std::string> names_of(const CLI::Option& o) {
  std::vector<std::string> out;
  for (const auto& s : o.get_snames()) out.push_back("-" + s);
  for (const auto& l : o.get_lnames()) out.push_back("--" + l);
  return out;
}

std::string case_label(const std::string& path, const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : "|") + fmt::format("\"{}|{}\"", path, w);
  return out;
}

}  // namespace

std::string bash_completion(CLI::App& app) {
  const std::string command = app.get_name();
  std::string fn = "_";
  for (char c : command) fn += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  std::vector<Node> nodes;
  collect(&app, "", nodes);

  std::string moves, skips, values, lists;
  for (const Node& n : nodes) {
    // Words that name a subcommand move the walk down; options that take a value skip it.
    for (CLI::App* sub : n.app->get_subcommands([](CLI::App* s) { return !s->get_name().empty() && !s->get_disabled(); })) {
      std::vector<std::string> names = {sub->get_name()};
      for (const auto& a : sub->get_aliases()) names.push_back(a);
      const std::string to = n.path.empty() ? sub->get_name() : n.path + "/" + sub->get_name();
      moves += fmt::format("      {}) path={} ;;\n", case_label(n.path, names), to);
    }
    std::vector<std::string> option_words, value_options;
    for (const CLI::Option* o : options_at(n.app)) {
      std::vector<std::string> names = names_of(*o);
      for (const auto& w : names) option_words.push_back(w);
      if (!takes_value(*o)) continue;
      for (const auto& w : names) value_options.push_back(w);
      const ValueKind v = value_kind(*o);
      values += fmt::format("      {}) kind={}{} ;;\n", case_label(n.path, names), v.kind.empty() ? "none" : v.kind,
                            v.words.empty() ? "" : fmt::format(" words='{}'", join(v.words)));
    }
    if (!value_options.empty()) skips += fmt::format("      {}) skip=1 ;;\n", case_label(n.path, value_options));
    // A word that is no option: a subcommand's name, or the value of a positional argument.
    std::vector<std::string> subs;
    for (CLI::App* sub : n.app->get_subcommands([](CLI::App* s) {
           return !s->get_name().empty() && !s->get_disabled() && !s->get_group().empty();
         }))
      subs.push_back(sub->get_name());
    std::string positional = "none";
    for (const CLI::Option* o : n.app->get_options())
      if (o->get_positional() && !hidden(*o)) {
        const ValueKind v = value_kind(*o);
        if (!v.kind.empty() && v.kind != "words") positional = v.kind;
        break;
      }
    lists += fmt::format("      \"{}\") options='{}' subcommands='{}' positional={} ;;\n", n.path, join(option_words),
                         join(subs), positional);
  }

  return fmt::format(R"(# bash completion for {cmd}: generated by `{cmd} --completion bash` (sv {ver}).
{fn}() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} path= skip= i w opt= pre= kind= words= options= subcommands= positional=
  # The subcommand named so far: each word before the cursor, skipping option values.
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${{COMP_WORDS[i]}}
    if [[ -n $skip ]]; then
      skip=
      [[ $w == = ]] && skip=1
      continue
    fi
    case "$path|$w" in
{moves}{skips}    esac
  done
  # The option whose value is at the cursor: --opt VALUE, --opt=VALUE, or --opt = VALUE where = breaks words.
  if [[ $cur == = && $COMP_CWORD -ge 2 ]]; then
    opt=${{COMP_WORDS[COMP_CWORD - 1]}} cur=
  elif [[ $COMP_CWORD -ge 3 && ${{COMP_WORDS[COMP_CWORD - 1]}} == = ]]; then
    opt=${{COMP_WORDS[COMP_CWORD - 2]}}
  elif [[ $cur == -*=* ]]; then
    opt=${{cur%%=*}} pre=${{cur%%=*}}= cur=${{cur#*=}}
  elif [[ $COMP_CWORD -ge 2 ]]; then
    opt=${{COMP_WORDS[COMP_CWORD - 1]}}
  fi
  if [[ -n $opt ]]; then
    case "$path|$opt" in
{values}    esac
  fi
  if [[ -z $kind ]]; then
    cur=${{COMP_WORDS[COMP_CWORD]}} pre=
    case "$path" in
{lists}    esac
    if [[ $cur == -* ]]; then
      words=$options
    else
      words=$subcommands kind=$positional
    fi
  fi
  COMPREPLY=()
  [[ -n $words ]] && mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
  case $kind in
    files) compopt -o filenames 2>/dev/null; mapfile -t -O "${{#COMPREPLY[@]}}" COMPREPLY < <(compgen -f -- "$cur") ;;
    dirs) compopt -o filenames 2>/dev/null; mapfile -t -O "${{#COMPREPLY[@]}}" COMPREPLY < <(compgen -d -- "$cur") ;;
    commands) mapfile -t -O "${{#COMPREPLY[@]}}" COMPREPLY < <(compgen -c -- "$cur") ;;
  esac
  if [[ -n $pre ]]; then
    COMPREPLY=("${{COMPREPLY[@]/#/$pre}}")
  fi
  return 0
}}
complete -F {fn} {cmd}
)",
                     fmt::arg("cmd", command), fmt::arg("ver", SV_VERSION), fmt::arg("fn", fn), fmt::arg("moves", moves),
                     fmt::arg("skips", skips), fmt::arg("values", values), fmt::arg("lists", lists));
}

bool wants_completion(int argc, char** argv) {
  return argc >= 2 && (std::strcmp(argv[1], "--completion") == 0 || std::strncmp(argv[1], "--completion=", 13) == 0);
}

int print_completion(CLI::App& app, int argc, char** argv) {
  std::string shell = std::strchr(argv[1], '=') ? std::strchr(argv[1], '=') + 1 : (argc >= 3 ? argv[2] : "");
  if (shell != "bash" || argc > (std::strchr(argv[1], '=') ? 2 : 3)) {
    std::fprintf(stderr, "%s: --completion takes one shell: bash\n", app.get_name().c_str());
    return 2;
  }
  const std::string script = bash_completion(app);
  std::fwrite(script.data(), 1, script.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace sv
