// Schema fragments shared by the tools' requests and results, so a field such as a region or a
// primitive filter is declared once and reads the same in every tool.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "core/scene.hpp"

namespace sv::schema {

json number(const std::string& doc);
json number(const std::string& doc, double minimum);
json integer(const std::string& doc, int minimum = 0);
json boolean(const std::string& doc);
json string(const std::string& doc);
json enumeration(std::initializer_list<const char*> values, const std::string& doc);
json array(json items, const std::string& doc);
// A fixed-length array with one schema per position, e.g. [primitive_id, role].
json tuple(std::vector<json> items, const std::string& doc);
json point(const std::string& doc = "[x, y] in image pixels");
json id(const std::string& doc);
// An object with these properties; `required` lists the keys that must be present.
json object(json properties, std::initializer_list<const char*> required = {}, const std::string& doc = "");
// An object whose members are not listed (a scoreboard, an edit's own fields).
json open_object(const std::string& doc);
// A JSON value of any type (used for config values).
json any(const std::string& doc);
// Adds "default" to a property schema.
json with_default(json s, json value);
// Makes a property nullable, null by default (null means "not given").
json nullable(json s);

// A region of interest: rect, polygon, primitive set, vertex neighbourhood, or a region named
// in the scene's `regions`.
json region(const std::string& doc);
// The catalog's PrimitiveFilter.
json primitive_filter();
// A rect region of a finding, as the catalog's Region with kind "rect".
json rect_region();

// Vocabularies of the catalog.
json primitive_type();
json semantic_role();
json issue_kind();

}  // namespace sv::schema
