import Testing

@testable import Offpeak

struct TemplateTests {
    @Test func findsVariablesAndRenders() throws {
        let template = try Template("Summarize {{ item }} from {{path}}.")
        #expect(template.variables == ["item", "path"])
        #expect(template.render(["item": "X", "path": "a.md"]) == "Summarize X from a.md.")
    }

    @Test func rejectsUnclosedPlaceholder() {
        #expect(throws: Template.ParseError.unclosed(offset: 4)) { try Template("abc {{item") }
    }

    @Test func rejectsEmptyName() {
        #expect(throws: Template.ParseError.badName("")) { try Template("{{ }}") }
    }
}
