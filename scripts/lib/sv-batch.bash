# bash completion for sv-batch (scripts/batch), installed as share/bash-completion/completions/sv-batch.
# Its options are scripts/batch's (test/e2e/test_install.cpp checks that each one of its --help is here).
_sv_batch() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  case $prev in
    --sshloginfile | --joblog)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0 ;;
    --sv-bin)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      return 0 ;;
    --ssh) mapfile -t COMPREPLY < <(compgen -c -- "$cur"); return 0 ;;
    --export)
      # a comma-separated list: complete the item after the last comma
      local done=${cur%"${cur##*,}"}
      mapfile -t COMPREPLY < <(compgen -P "$done" -W "svg gcode commands png animate" -- "${cur##*,}")
      compopt -o nospace 2>/dev/null
      return 0 ;;
    -j | --set) return 0 ;;
  esac
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "-j --sshloginfile --ssh --sv-bin --refine --export --set --joblog -q --quiet -h --help" -- "$cur")
  else
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
  return 0
}
complete -F _sv_batch sv-batch
