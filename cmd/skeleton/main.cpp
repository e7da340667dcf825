// sv-skeleton: see man/sv-skeleton.1.
#include "cli/stages.hpp"

int main(int argc, char** argv) { return sv::run_stage_main(argc, argv, sv::skeleton_stage()); }
