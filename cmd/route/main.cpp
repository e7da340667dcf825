// sv-route: see man/sv-route.1.
#include "cli/stages.hpp"

int main(int argc, char** argv) { return sv::run_stage_main(argc, argv, sv::route_stage()); }
