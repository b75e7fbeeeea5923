"""The functions and conversations the Messages and Responses tests share. Each
test file spells the functions as its API does: Anthropic's `input_schema`,
the Responses API's `parameters`."""
WEATHER = {"name": "get_weather", "description": "Get the current weather in a city",
           "schema": {"type": "object",
                      "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 40},
                                     "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                      "required": ["city"]}}
FLIGHT = {"name": "book_flight", "description": "Book a flight between two airports",
          "schema": {"type": "object",
                     "properties": {"origin": {"type": "string", "pattern": "^[A-Z]{3}$"},
                                    "destination": {"type": "string", "pattern": "^[A-Z]{3}$"},
                                    "date": {"type": "string", "format": "date"},
                                    "passengers": {"type": "integer", "minimum": 1, "maximum": 9}},
                     "required": ["origin", "destination", "date", "passengers"],
                     "additionalProperties": False}}
PARIS = [{"role": "user", "content": "Use the tool to find the weather in Paris, then tell me in one sentence."}]
FLY = [{"role": "user", "content": "Book me and my wife a flight from Boston to Lisbon on 2025-06-14."}]
SYSTEM = "You are a terse assistant."
