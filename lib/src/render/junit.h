// The start every JUnit document of tsctl's has (validate, migrate, compat).
#pragma once

#include <pugixml.hpp>

namespace tsctl {

// Appends the XML declaration and <testsuites name="`name`"> to `doc`.
inline pugi::xml_node JUnitSuites(pugi::xml_document& doc, const char* name) {
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  suites.append_attribute("name") = name;
  return suites;
}

}  // namespace tsctl
