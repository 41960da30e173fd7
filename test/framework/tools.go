package framework

import "github.com/nginx-operator/nginx-operator/test/tools"

// RequireTool is tools.Require, for tests that already use the framework.
var RequireTool = tools.Require

// ToolsRequired is tools.Required.
var ToolsRequired = tools.Required

// RepoRoot is tools.RepoRoot.
var RepoRoot = tools.RepoRoot
