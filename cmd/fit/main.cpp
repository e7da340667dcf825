// sv-fit: see man/sv-fit.1.
#include "cli/stages.hpp"

int main(int argc, char** argv) { return sv::run_stage_main(argc, argv, sv::fit_stage()); }
