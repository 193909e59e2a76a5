import Mustache

/// The dashboard's page and its style sheet. `{{x}}` escapes what it prints (every text that came
/// from a spec, a provider or a page is printed so); `{{{chart}}}` alone is printed as it is: the
/// SVG `SpendChart` draws from numbers and dates.
enum DashboardTemplates {
    static let page = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        {{#refresh}}<meta http-equiv="refresh" content="{{refresh}}">{{/refresh}}
        <title>offpeak: {{workspace}}</title>
        <link rel="stylesheet" href="/style.css">
        </head>
        <body>
        <header><h1>offpeak</h1><p id="workspace">{{workspace}}</p><p id="now">{{now}}</p></header>
        <section id="conditions"><h2>Now</h2>
        <p>{{conditions}}</p>
        <p>spent today: <span id="spent-today">{{spentToday}}</span></p>
        </section>
        <section id="runs"><h2>Runs</h2>
        <table><thead><tr><th>job</th><th>run</th><th>state</th><th>items</th><th>cost</th><th>why</th></tr></thead>
        <tbody>
        {{#runs}}<tr><td>{{job}}</td><td>{{id}}</td><td>{{state}}</td>
        <td><progress max="100" value="{{percent}}">{{percent}} %</progress> {{items}}</td><td>{{dollars}}</td><td>{{why}}</td></tr>
        {{/runs}}
        {{^runs}}<tr><td colspan="6">no runs yet</td></tr>{{/runs}}
        </tbody></table>
        </section>
        <section id="queue"><h2>Waiting</h2>
        <table><thead><tr><th>job</th><th>since</th><th>why</th></tr></thead>
        <tbody>
        {{#waiting}}<tr><td>{{job}}</td><td>{{since}}</td><td>{{why}}</td></tr>
        {{/waiting}}
        {{^waiting}}<tr><td colspan="3">nothing waits</td></tr>{{/waiting}}
        </tbody></table>
        </section>
        <section id="money"><h2>Money</h2>
        {{{chart}}}
        <p class="legend"><span class="spent">spent</span> <span class="naive">the naive way</span> {{chartNote}}</p>
        <table><thead><tr><th>job</th><th>calls</th><th>cost</th><th>naive</th><th>saved</th></tr></thead>
        <tbody>
        {{#costs}}<tr><td>{{key}}</td><td>{{calls}}</td><td>{{dollars}}</td><td>{{naive}}</td><td>{{saved}}</td></tr>
        {{/costs}}
        </tbody></table>
        </section>
        <section id="cache"><h2>Cache</h2>
        <pre>{{cache}}</pre>
        </section>
        <footer><p>JSON: <a href="/api/status.json">status</a> <a href="/api/queue.json">queue</a>
        <a href="/api/costs.json?by=day">costs</a> <a href="/api/cache.json">cache</a></p></footer>
        </body>
        </html>

        """

    static let error = """
        <!doctype html>
        <html lang="en">
        <head><meta charset="utf-8"><title>offpeak: the store cannot be read</title>
        <link rel="stylesheet" href="/style.css"></head>
        <body><h1>offpeak</h1><p id="error">{{message}}</p></body>
        </html>

        """

    static let style = """
        body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; max-width: 1100px; }
        header { display: flex; gap: 1em; align-items: baseline; }
        h1 { font-size: 1.4em; margin: 0; } h2 { font-size: 1.1em; margin: 1.2em 0 0.4em; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; vertical-align: top; }
        .chart { width: 100%; height: auto; max-width: 720px; }
        .chart polyline { fill: none; stroke-width: 2; }
        .chart polyline.spent, .chart circle.spent { stroke: #1f6feb; fill: none; }
        .chart polyline.naive { stroke: #bbb; stroke-dasharray: 4 3; }
        .chart text { font-size: 11px; fill: #666; }
        .legend .spent { color: #1f6feb; } .legend .naive { color: #999; }
        pre { background: #f6f6f6; padding: 0.6em; }

        """

    static let templates: MustacheLibrary = {
        var library = MustacheLibrary()
        try? library.register(page, named: "page")
        try? library.register(error, named: "error")
        return library
    }()

    static func render(_ page: DashboardPage) -> String {
        templates.render(page, withTemplate: "page") ?? ""
    }

    static func render(_ page: ErrorPage) -> String {
        templates.render(page, withTemplate: "error") ?? ""
    }
}
